# An installation is imported by its name; the next apply runs the whole tree.
terraform import landscaper_installation.app app
