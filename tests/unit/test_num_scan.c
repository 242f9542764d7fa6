/*
 * tests/unit/test_num_scan.c - src/import/num_scan.h against byte loops:
 * every length of digits from 0 to 20, every digit and hex letter in every
 * position, each followed by every kind of byte, with digits after it.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "import/num_scan.h"

static int ref_digits(const char *p, int hex, uint64_t *v)
{
	int n = 0;

	*v = 0;
	for (;; n++) {
		unsigned d = hex ? mp_scan_hexval1[(unsigned char)p[n]] - 1u
		                 : (unsigned)(unsigned char)p[n] - '0';

		if (d >= (hex ? 16u : 10u))
			break;
		*v = *v * (hex ? 16 : 10) + d;
	}
	return n;
}

/* digits at offset 16 of a 64-byte buffer, then stop, then more digits */
static void check(const char *digits, char stop, int hex)
{
	char buf[64];
	uint64_t want, got = 12345;
	int n, len = (int)strlen(digits);

	memset(buf, '7', sizeof(buf));
	memcpy(buf + 16, digits, (size_t)len);
	buf[16 + len] = stop;
	n = ref_digits(buf + 16, hex, &want);
	cr_assert_eq(hex ? mp_scan_hex(buf + 16, &got) : mp_scan_dec(buf + 16, &got),
	             n > 16 ? 17 : n, "'%s' then %#x", digits, (unsigned char)stop);
	if (n <= 16 && (n > 0 || !hex))
		cr_assert_eq(got, want, "'%s': %llu, want %llu", digits, (unsigned long long)got,
		             (unsigned long long)want);
}

Test(num_scan, every_length_and_stop)
{
	static const char stops[] = {',', '\n', '\r', '\0', ' ',        '/',        ':',       '@',
	                             'G', 'g',  '`',  0x7f, (char)0x80, (char)0xb0, (char)0xff};
	static const char hexdig[] = "0123456789abcdefABCDEF";
	char hex[24], dec[24];

	for (int len = 0; len <= 20; len++)
		for (int k = 0; k < 22; k++) {
			for (int i = 0; i < len; i++) {
				hex[i] = hexdig[(k + 7 * i) % 22];
				dec[i] = (char)('0' + (k + 3 * i) % 10);
			}
			hex[len] = dec[len] = '\0';
			for (size_t s = 0; s < sizeof(stops); s++) {
				check(hex, stops[s], 1);
				check(dec, stops[s], 0);
			}
		}
}

Test(num_scan, largest_values)
{
	check("18446744073709551615", ',', 0);
	check("9999999999999999", ',', 0);
	check("99999999999999999", ',', 0);
	check("ffffffffffffffff", ',', 1);
	check("FFFFFFFFFFFFFFFF0", ',', 1);
	check("8000000000000000", '\n', 1);
	check("0000000000000001", '\n', 0);
}
