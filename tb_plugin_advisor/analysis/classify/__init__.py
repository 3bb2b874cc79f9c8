"""What a name or a device means: rule tables and vectorised classifiers over event and kernel
names, device peaks."""
