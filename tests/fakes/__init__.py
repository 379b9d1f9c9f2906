"""Local fakes that speak third-party wire formats over real HTTP on 127.0.0.1."""
