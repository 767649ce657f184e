package template

import (
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/distribution/reference"
)

// parseOCIRef splits an image reference into repository and version (tag or
// digest) as Landscaper's parseOCIRef does: Docker Hub names lose their
// index.docker.io/ and library/ prefixes, a missing tag becomes "latest", and a
// reference without any colon is rejected.
func parseOCIRef(ref string) ([2]string, error) {
	r := ref
	if i := strings.Index(r, "://"); i >= 0 {
		r = r[i+3:]
	}
	named, err := reference.ParseDockerRef(r)
	if err != nil {
		return [2]string{}, fmt.Errorf("invalid reference %q: %w", ref, err)
	}
	if !strings.Contains(ref, ":") {
		return [2]string{}, errors.New("invalid reference")
	}
	host := reference.Domain(named)
	if host == "docker.io" {
		host = "index.docker.io"
	}
	repo := path.Join(host, reference.Path(named))
	repo = strings.TrimPrefix(repo, "index.docker.io/library/")
	repo = strings.TrimPrefix(repo, "index.docker.io/")
	switch v := named.(type) {
	case reference.Tagged:
		return [2]string{repo, v.Tag()}, nil
	case reference.Digested:
		return [2]string{repo, v.Digest().String()}, nil
	}
	return [2]string{repo, ""}, nil
}
