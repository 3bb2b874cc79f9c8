"""`tb-advisor doctor`: what TensorBoard will and won't show for a logdir, why, and the fix."""
