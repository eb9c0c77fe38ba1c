"""Taiji: light tiles of a grid so that every symbol's rule holds (puzzle codes, a rule checker, Z3)."""
