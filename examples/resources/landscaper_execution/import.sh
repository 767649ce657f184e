# The import ID is the execution's name. The next apply reconciles every
# deploy item, since nothing is known about them yet.
terraform import landscaper_execution.app app
