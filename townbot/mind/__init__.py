"""One agent's cognition (paper section 4): memory, retrieval, planning, acting."""
