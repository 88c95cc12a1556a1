"""es-simhash: near-duplicate detection for crawled Chinese and English text."""
from .fingerprint import FINGERPRINT_VERSION, Fingerprint, Fingerprinter, hash64
from .idf import IDFTable

__version__ = "0.1.0"
__all__ = ["FINGERPRINT_VERSION", "Fingerprint", "Fingerprinter", "IDFTable", "hash64", "__version__"]
