package lscluster

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/util/validation"
)

// ID names an installation to take over: the provider target holding the
// Landscaper resource cluster's kubeconfig, the namespace and the
// Installation's name.
type ID struct {
	Target       string
	Namespace    string
	Installation string
}

// IDFormat is the shape of an import ID, for messages.
const IDFormat = "<provider target>/<namespace>/<installation>"

func (id ID) String() string {
	return id.Target + "/" + id.Namespace + "/" + id.Installation
}

// ParseID parses "<provider target>/<namespace>/<installation>". The
// namespace must be a valid namespace name and the installation a valid
// object name, so that a typo fails here, before any cluster is asked.
func ParseID(s string) (ID, error) {
	if s == "" {
		return ID{}, idError(s, "the ID is empty")
	}
	parts := strings.Split(s, "/")
	if len(parts) != 3 {
		return ID{}, idError(s, fmt.Sprintf("it has %d part(s) separated by \"/\", not 3", len(parts)))
	}
	id := ID{Target: parts[0], Namespace: parts[1], Installation: parts[2]}
	if err := CheckTarget(id.Target); err != nil {
		return ID{}, idError(s, err.Error())
	}
	if err := CheckNamespace(id.Namespace); err != nil {
		return ID{}, idError(s, err.Error())
	}
	if id.Installation == "" {
		return ID{}, idError(s, "the installation name is empty")
	}
	if errs := validation.IsDNS1123Subdomain(id.Installation); len(errs) > 0 {
		return ID{}, idError(s, fmt.Sprintf("the installation %q is not an object name: %s", id.Installation, strings.Join(errs, "; ")))
	}
	return id, nil
}

func idError(s, why string) error {
	return fmt.Errorf("import ID %q: want %s, such as \"landscaper/cu-example/hello-world\": %s", s, IDFormat, why)
}

// CheckTarget checks the name of the provider target that reaches a
// Landscaper resource cluster, as an import ID or a list names it.
func CheckTarget(name string) error {
	switch {
	case name == "":
		return errors.New("the provider target is empty")
	case strings.IndexFunc(name, unicode.IsSpace) >= 0:
		return fmt.Errorf("the provider target %q contains white space", name)
	}
	return nil
}

// CheckNamespace checks a namespace of a Landscaper resource cluster, so
// that a typo fails before any cluster is asked.
func CheckNamespace(ns string) error {
	if ns == "" {
		return errors.New("the namespace is empty")
	}
	if errs := validation.IsDNS1123Label(ns); len(errs) > 0 {
		return fmt.Errorf("the namespace %q is not a namespace name: %s", ns, strings.Join(errs, "; "))
	}
	return nil
}
