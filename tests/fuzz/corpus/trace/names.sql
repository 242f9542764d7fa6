UPDATE phases SET name = X'66770078'; UPDATE frames SET name = char(27) || '[2J';
