UPDATE stacks SET parent = id;
