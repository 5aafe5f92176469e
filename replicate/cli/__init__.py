"""The `replicate` command group: one module per subcommand, one-line errors, rich tables and
`--json` output."""
