"""What a trace can support: facts measured on one profile about what it holds, and the table of
rules that turns them into a status per analysis (supported, degraded, unsupported), with the reason
and the capture setting that fixes it."""
