package lscluster

import (
	"crypto/sha1" //nolint:gosec // Landscaper's naming scheme, not a security measure.
	"encoding/base32"
	"regexp"
	"strings"
)

// Landscaper names the DataObjects and Targets an installation imports and
// exports after the context they live in (empty for root installations,
// "Inst.<parent>" below) and the name the Installation uses for them
// (helper.GenerateDataObjectName in Landscaper's apis/core/v1alpha1/helper):
// a name starting with "#" is used as it is without the "#"; a root's name
// that is a valid object name is used as it is; everything else is the
// lower-case, unpadded base32 of the SHA-1 of "<context>/<name>".

var subdomain = regexp.MustCompile(`^([a-z0-9]|([a-z0-9][a-z0-9.-]*[a-z0-9]))$`)

var lowerBase32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// DataObjectName is the name of the DataObject or Target object the name
// refers to in the context.
func DataObjectName(context, name string) string {
	if n, ok := strings.CutPrefix(name, nonContextifiedPrefix); ok {
		return n
	}
	if context == "" && subdomain.MatchString(name) {
		return name
	}
	h := sha1.Sum([]byte(context + "/" + name)) //nolint:gosec // see above
	return lowerBase32.EncodeToString(h[:])
}

// InstallationContext is the context an installation's sub-installations
// find their imports in and its exports are written for its parent's data
// flow: Landscaper's data object source of the installation.
func InstallationContext(installation string) string {
	return installationSourcePfx + installation
}
