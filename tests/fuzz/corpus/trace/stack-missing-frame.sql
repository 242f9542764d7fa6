UPDATE stacks SET frame = 12345;
