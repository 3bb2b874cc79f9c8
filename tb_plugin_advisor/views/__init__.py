"""How results leave the package: HTTP routes for the tab, the tb-advisor CLI and its commands, exports."""
