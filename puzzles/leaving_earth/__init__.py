"""Leaving Earth mission planning with Z3 (kind `leaving_earth.plan`)."""
