package ocitest

import "sigs.k8s.io/yaml"

func yamlUnmarshal(data []byte, v any) error { return yaml.Unmarshal(data, v) }
