"""cuenv: named, isolated CUDA environments checked against the machine's driver and GPU."""

__version__ = "0.1.0"
