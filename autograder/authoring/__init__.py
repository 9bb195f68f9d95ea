"""Authoring the course: instructor notebooks kept in sync with solutions/ (`notebooks`), the
student support module (`support_module`), the student release (`release`) and the demo's sample
submissions (`samples`)."""
