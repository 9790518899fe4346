"""An identification run records the hardware's joint_states at the loop's rate.

``sim-to-real --publish-rate HZ`` gives the hardware node its ``publish_rate``: at the
node's default 50 Hz, a 200 Hz loop's torque readings reach the recording one in four.
Four runs of the bundled arm on the physics bench recorded at 200 Hz gave its XM430
joints' frictions within 23 % of the truth; the same recordings thinned to one read in
four, off by up to 106 % (docs/identify.md, "Measured on the physics bench"). No option
leaves the node its default; a rate that is not a positive number is refused before
anything starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from skel_ros.cli.main import main
from skel_ros.nodes.sim_to_real import RunConfig, node_commands
from skel_ros.resources import example, resolve

if TYPE_CHECKING:
    from pathlib import Path


def _config(tmp_path: Path, rate: float | None) -> RunConfig:
    return RunConfig(skel_file=example("arm.skel"),
                     hardware_config=resolve("package://skel_ros/config/hardware/"
                                             "arm_dynamixel.yaml"),
                     trajectory=example("arm_trajectory.xml"), out_dir=tmp_path,
                     publish_rate=rate)


def test_the_hardware_node_gets_the_publish_rate(tmp_path: Path) -> None:
    commands = node_commands(_config(tmp_path, 200.0))
    assert "publish_rate:=200.0" in commands["real"]
    assert not any("publish_rate" in word for word in commands["sim"])
    default = node_commands(_config(tmp_path, None))
    assert not any("publish_rate" in word for word in default["real"])


@pytest.mark.parametrize("rate", ["0", "-200", "fast", "nan"])
def test_a_rate_that_is_not_positive_is_refused(rate: str, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["sim-to-real", "--publish-rate", rate, "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--publish-rate" in err
    assert "expected a finite number > 0" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()
