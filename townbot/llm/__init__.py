"""The only place that talks to a language model: the port, the offline model, metering."""
