"""tf2_msgs, built from scripts/tf2_msgs by scripts/setup.sh, is a working message package."""

from __future__ import annotations

import pytest
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Quaternion, Transform, TransformStamped, Vector3
from rclpy.serialization import deserialize_message, serialize_message
from std_msgs.msg import Header
from tf2_msgs.msg import TFMessage

pytestmark = pytest.mark.ros


def test_tfmessage_round_trips_through_rclpy_serialization() -> None:
    transforms = [
        TransformStamped(
            header=Header(stamp=Time(sec=12, nanosec=345), frame_id="world"),
            child_frame_id=f"link_{index}",
            transform=Transform(
                translation=Vector3(x=0.1 * index, y=-2.0, z=3.5),
                rotation=Quaternion(x=0.0, y=0.0, z=0.7071067811865476, w=0.7071067811865476),
            ),
        )
        for index in range(3)
    ]
    message = TFMessage(transforms=transforms)

    data = serialize_message(message)
    assert isinstance(data, bytes)
    assert len(data) > 3 * 7 * 8  # at least the 7 doubles of each transform

    decoded = deserialize_message(data, TFMessage)
    assert decoded == message
    assert [t.child_frame_id for t in decoded.transforms] == ["link_0", "link_1", "link_2"]
    assert decoded.transforms[2].transform.translation.x == pytest.approx(0.2)


def test_tfmessage_has_the_standard_definition() -> None:
    # Same field as upstream tf2_msgs, so /tf interoperates with a real ROS 2 install.
    assert TFMessage.get_fields_and_field_types() == {
        "transforms": "sequence<geometry_msgs/TransformStamped>"
    }
    empty = TFMessage()
    assert list(empty.transforms) == []
