"""MIT-mode CAN motors (Mini Cheetah, T-motor/CubeMars AK, Damiao): codec, models, driver."""

from skel_ros.hardware.mit.codec import MitCodec, MitRanges, MitReply, Variant
from skel_ros.hardware.mit.models import MODELS, MitModel, lookup, resolve

__all__ = ["MODELS", "MitCodec", "MitModel", "MitRanges", "MitReply", "Variant", "lookup",
           "resolve"]
