"""The ``skel-ros`` command line: inspect, validate and convert SKEL files, and more."""
