"""The Search for Planet X: board rules (Z3 and plain Python), enumeration in shards."""
