"""Controllers beside the photonics: the InfiniteHBD OCS transceiver, the Flex-SiPAC
wavelength-selective switch and the transceiver's de-interleaver cascade."""
