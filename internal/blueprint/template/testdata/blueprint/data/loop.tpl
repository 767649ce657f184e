{{ include "data/loop.tpl" . }}
