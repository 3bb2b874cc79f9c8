"""Reports and diffs as text, Markdown and HTML: what the CLI prints and the exports save."""
