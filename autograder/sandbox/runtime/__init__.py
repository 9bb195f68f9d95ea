"""Code that runs *inside* the sandbox: the fork server (zygote), the submission child and the wire format.

Nothing here may import the rest of the kit: this directory is the only part of it that the
sandbox can see, so it must never hold tests, reference solutions or scores.
"""
