"""FHIR R4 export of a person (bundle.py) and its bot-API endpoint (api.py); docs/fhir.md."""
