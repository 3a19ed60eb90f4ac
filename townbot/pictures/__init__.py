"""Pictures of the town: maps of a moment, animations of a span, and plots."""
