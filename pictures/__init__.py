"""Pictures of results: one module per puzzle family, each drawing SVG from plain data (a result dict and
the params it needs), so the web layers can show them without knowing any puzzle. Standard library only."""
