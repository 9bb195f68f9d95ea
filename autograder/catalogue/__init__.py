"""The misconception catalogue: realistic buggy and alternative correct implementations
(`entries/<assignment>/{mutants,correct}/`), read by `zoo`. They prove the hidden tests and give
the demo its sample submissions."""
