"""Amaranth hardware of aifabric. Imports amaranth only: never numpy, ``models`` or ``cosim``."""
