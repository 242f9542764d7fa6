DROP TABLE stacks;
