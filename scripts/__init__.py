"""Entry scripts called by the Makefile: thin wrappers over rtl, models and cosim."""
