"""Lowest layer: errors, units, paths; imports nothing else of casslab."""
