package signing

// The descriptors of the normalisation tests seed the fuzz test.
var (
	CD1      = cd1
	LegacyCD = legacyCD
)
