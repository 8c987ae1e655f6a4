"""The desired state: the YAML file people keep in git, loaded, validated and modelled."""
