"""Deciding whether a fingerprint duplicates one of its candidates: the rule protocol and the default rule."""
