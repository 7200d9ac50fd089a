"""Imported by the start-up hook's thread once it let the import lock go (`sitecustomize.py`, `module_lock`): a
module nothing else imports, so its import needs the lock."""
