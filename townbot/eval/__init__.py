"""The paper's evaluation (sections 6 and 7): interviews under ablations, a judge's rankings
rated with TrueSkill, and the end-to-end measures. It reads a town and never changes it."""
