"""The run folder's files: atomic writes, output folders agentrig owns, their manifests, locks and temporaries."""
