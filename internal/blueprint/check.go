package blueprint

import (
	"errors"
	"fmt"
	"strings"
)

// checkDefinition applies Landscaper's defaults to the definition, checks
// it the way Landscaper's blueprint validation does, makes sure every file
// it names exists inside the blueprint, and decodes the subinstallations.
func (b *Blueprint) checkDefinition() error {
	d := &b.Definition
	if d.APIVersion != "" && d.APIVersion != APIVersion {
		return fmt.Errorf("apiVersion is %q, expected %q", d.APIVersion, APIVersion)
	}
	if d.Kind != "" && d.Kind != KindBlueprint {
		return fmt.Errorf("kind is %q, expected %q", d.Kind, KindBlueprint)
	}
	var errs []error
	defaultImports(d.Imports)
	defaultExports(d.Exports)
	errs = append(errs, checkImports("imports", d.Imports, map[string]bool{})...)
	errs = append(errs, checkExports(d.Exports)...)
	for _, list := range []struct {
		field string
		execs []TemplateExecutor
	}{
		{"importExecutions", d.ImportExecutions},
		{"deployExecutions", d.DeployExecutions},
		{"exportExecutions", d.ExportExecutions},
		{"subinstallationExecutions", d.SubinstallationExecutions},
	} {
		errs = append(errs, b.checkExecutions(list.field, list.execs)...)
	}
	b.Subinstallations = make([]*InstallationTemplate, len(d.Subinstallations))
	names := map[string]bool{}
	for i, s := range d.Subinstallations {
		field := fmt.Sprintf("subinstallations[%d]", i)
		tmpl := s.InstallationTemplate
		if tmpl == nil { // an inline template wins over file, as in Landscaper
			if s.File == "" {
				errs = append(errs, fmt.Errorf("%s: neither file nor an inline installation template", field))
				continue
			}
			data, err := b.ReadFile(s.File)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s.file: %w", field, err))
				continue
			}
			tmpl = &InstallationTemplate{}
			if err := decodeStrict(data, tmpl); err != nil {
				errs = append(errs, fmt.Errorf("%s.file %s: %w", field, s.File, err))
				continue
			}
			field += " (" + s.File + ")"
		}
		if tmpl.APIVersion != "" && tmpl.APIVersion != APIVersion {
			errs = append(errs, fmt.Errorf("%s: apiVersion is %q, expected %q", field, tmpl.APIVersion, APIVersion))
		}
		if tmpl.Kind != "" && tmpl.Kind != KindInstallationTemplate {
			errs = append(errs, fmt.Errorf("%s: kind is %q, expected %q", field, tmpl.Kind, KindInstallationTemplate))
		}
		if tmpl.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is required", field))
		} else if names[tmpl.Name] {
			errs = append(errs, fmt.Errorf("%s: duplicate subinstallation name %q", field, tmpl.Name))
		}
		names[tmpl.Name] = true
		hasRef, hasFS := tmpl.Blueprint.Ref != "", len(tmpl.Blueprint.Filesystem) != 0
		if hasRef == hasFS {
			errs = append(errs, fmt.Errorf("%s: blueprint needs exactly one of ref and filesystem", field))
		}
		b.Subinstallations[i] = tmpl
	}
	return errors.Join(errs...)
}

// defaultImports applies Landscaper's defaults: required is true, the type
// follows from schema (data) or targetType (target), and a targetType
// without a slash belongs to Landscaper's domain.
func defaultImports(list []ImportDefinition) {
	for i := range list {
		imp := &list[i]
		defaultImports(imp.ConditionalImports)
		if len(imp.Schema) != 0 && imp.TargetType != "" {
			continue // invalid; reported by checkImports
		}
		if imp.Type == "" {
			if len(imp.Schema) != 0 {
				imp.Type = ImportTypeData
			} else if imp.TargetType != "" {
				imp.Type = ImportTypeTarget
			}
		}
		if imp.Type == ImportTypeTarget || imp.Type == ImportTypeTargetList {
			imp.TargetType = qualifyTargetType(imp.TargetType)
		}
	}
}

func defaultExports(list []ExportDefinition) {
	for i := range list {
		exp := &list[i]
		if len(exp.Schema) != 0 && exp.TargetType != "" {
			continue
		}
		if exp.Type == "" {
			if len(exp.Schema) != 0 {
				exp.Type = ExportTypeData
			} else if exp.TargetType != "" {
				exp.Type = ExportTypeTarget
			}
		}
		if exp.Type == ExportTypeTarget {
			exp.TargetType = qualifyTargetType(exp.TargetType)
		}
	}
}

func qualifyTargetType(t string) string {
	if t != "" && !strings.Contains(t, "/") {
		return landscaperDomain + "/" + t
	}
	return t
}

func checkImports(field string, list []ImportDefinition, seen map[string]bool) []error {
	var errs []error
	for i := range list {
		imp := &list[i]
		f := fmt.Sprintf("%s[%d]", field, i)
		if imp.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is required", f))
		} else {
			f = fmt.Sprintf("%s (%s)", f, imp.Name)
			if seen[imp.Name] {
				errs = append(errs, fmt.Errorf("%s: duplicate import name %q", f, imp.Name))
			}
			seen[imp.Name] = true
		}
		switch imp.Type {
		case ImportTypeData:
			if len(imp.Schema) == 0 {
				errs = append(errs, fmt.Errorf("%s: schema is required for type data", f))
			}
			if imp.TargetType != "" {
				errs = append(errs, fmt.Errorf("%s: targetType is not allowed for type data", f))
			}
		case ImportTypeTarget, ImportTypeTargetList, ImportTypeTargetMap:
			if imp.TargetType == "" {
				errs = append(errs, fmt.Errorf("%s: targetType is required for type %s", f, imp.Type))
			}
			if len(imp.Schema) != 0 {
				errs = append(errs, fmt.Errorf("%s: schema is not allowed for type %s", f, imp.Type))
			}
		case "":
			errs = append(errs, fmt.Errorf("%s: either schema or targetType is required", f))
		default:
			errs = append(errs, fmt.Errorf("%s: type %q is not supported (data, target, targetList, targetMap)", f, imp.Type))
		}
		if len(imp.ConditionalImports) > 0 && imp.IsRequired() {
			errs = append(errs, fmt.Errorf("%s: conditional imports are only allowed on optional imports (required: false)", f))
		}
		if imp.Default != nil && imp.Type != ImportTypeData {
			errs = append(errs, fmt.Errorf("%s: a default is only supported for data imports", f))
		}
		errs = append(errs, checkImports(f+".imports", imp.ConditionalImports, seen)...)
	}
	return errs
}

func checkExports(list []ExportDefinition) []error {
	var errs []error
	seen := map[string]bool{}
	for i, exp := range list {
		f := fmt.Sprintf("exports[%d]", i)
		if exp.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is required", f))
		} else {
			f = fmt.Sprintf("%s (%s)", f, exp.Name)
			if seen[exp.Name] {
				errs = append(errs, fmt.Errorf("%s: duplicate export name %q", f, exp.Name))
			}
			seen[exp.Name] = true
		}
		switch exp.Type {
		case ExportTypeData:
			if len(exp.Schema) == 0 {
				errs = append(errs, fmt.Errorf("%s: schema is required for type data", f))
			}
			if exp.TargetType != "" {
				errs = append(errs, fmt.Errorf("%s: targetType is not allowed for type data", f))
			}
		case ExportTypeTarget:
			if exp.TargetType == "" {
				errs = append(errs, fmt.Errorf("%s: targetType is required for type target", f))
			}
			if len(exp.Schema) != 0 {
				errs = append(errs, fmt.Errorf("%s: schema is not allowed for type target", f))
			}
		case "":
			errs = append(errs, fmt.Errorf("%s: either schema or targetType is required", f))
		default:
			errs = append(errs, fmt.Errorf("%s: type %q is not supported (data, target)", f, exp.Type))
		}
	}
	return errs
}

func (b *Blueprint) checkExecutions(field string, execs []TemplateExecutor) []error {
	var errs []error
	seen := map[string]bool{}
	for i, e := range execs {
		f := fmt.Sprintf("%s[%d]", field, i)
		if e.Name == "" {
			errs = append(errs, fmt.Errorf("%s: name is required", f))
		} else {
			f = fmt.Sprintf("%s (%s)", f, e.Name)
			if seen[e.Name] {
				errs = append(errs, fmt.Errorf("%s: duplicate execution name %q", f, e.Name))
			}
			seen[e.Name] = true
		}
		switch e.Type {
		case TemplateTypeGoTemplate, TemplateTypeSpiff:
		case "":
			errs = append(errs, fmt.Errorf("%s: type is required (GoTemplate or Spiff)", f))
		default:
			errs = append(errs, fmt.Errorf("%s: type %q is not supported (GoTemplate or Spiff)", f, e.Type))
		}
		if _, err := b.TemplateSource(e); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f, err))
		}
	}
	return errs
}
