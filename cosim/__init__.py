"""Co-simulation: cocotb testbenches (``test_<block>.py``) and the Verilator runner."""
