"""The bottom layer: settings and the states every layer above shares. Imports nothing of zolve."""
