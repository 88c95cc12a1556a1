"""What makes a stored document a candidate of a fingerprint: the SimHash lookup keys (permutation tables or the four
16-bit segments), Hamming distances, and the sentence and sketch channels, shared by every backend."""
