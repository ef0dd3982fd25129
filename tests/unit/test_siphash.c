/*
 * Tests of common/siphash against the reference implementation's test
 * vectors (https://github.com/veorq/SipHash): message i is the bytes
 * 0, 1, ..., i-1. SipHash-2-4 with the key bytes 00..0f is the paper's
 * vectors.h; SipHash-1-3 with keys 0 and 1 is the reference code built with
 * cROUNDS=1, dROUNDS=3 (the values OCaml's test suite checks its runtime's
 * SipHash-1-3 against; key 1 is k0 = 1, k1 = 0). The 2-4 vectors check the
 * rounds, the byte order and the tail padding; the 1-3 ones the variant the
 * tables use.
 */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "check_main.h"
#include "common/siphash.h"
#include "common/siphash_private.h"

static const uint64_t vectors_2_4[64] = {
    0x726fdb47dd0e0e31ULL, 0x74f839c593dc67fdULL, 0x0d6c8009d9a94f5aULL,
    0x85676696d7fb7e2dULL, 0xcf2794e0277187b7ULL, 0x18765564cd99a68dULL,
    0xcbc9466e58fee3ceULL, 0xab0200f58b01d137ULL, 0x93f5f5799a932462ULL,
    0x9e0082df0ba9e4b0ULL, 0x7a5dbbc594ddb9f3ULL, 0xf4b32f46226bada7ULL,
    0x751e8fbc860ee5fbULL, 0x14ea5627c0843d90ULL, 0xf723ca908e7af2eeULL,
    0xa129ca6149be45e5ULL, 0x3f2acc7f57c29bdbULL, 0x699ae9f52cbe4794ULL,
    0x4bc1b3f0968dd39cULL, 0xbb6dc91da77961bdULL, 0xbed65cf21aa2ee98ULL,
    0xd0f2cbb02e3b67c7ULL, 0x93536795e3a33e88ULL, 0xa80c038ccd5ccec8ULL,
    0xb8ad50c6f649af94ULL, 0xbce192de8a85b8eaULL, 0x17d835b85bbb15f3ULL,
    0x2f2e6163076bcfadULL, 0xde4daaaca71dc9a5ULL, 0xa6a2506687956571ULL,
    0xad87a3535c49ef28ULL, 0x32d892fad841c342ULL, 0x7127512f72f27cceULL,
    0xa7f32346f95978e3ULL, 0x12e0b01abb051238ULL, 0x15e034d40fa197aeULL,
    0x314dffbe0815a3b4ULL, 0x027990f029623981ULL, 0xcadcd4e59ef40c4dULL,
    0x9abfd8766a33735cULL, 0x0e3ea96b5304a7d0ULL, 0xad0c42d6fc585992ULL,
    0x187306c89bc215a9ULL, 0xd4a60abcf3792b95ULL, 0xf935451de4f21df2ULL,
    0xa9538f0419755787ULL, 0xdb9acddff56ca510ULL, 0xd06c98cd5c0975ebULL,
    0xe612a3cb9ecba951ULL, 0xc766e62cfcadaf96ULL, 0xee64435a9752fe72ULL,
    0xa192d576b245165aULL, 0x0a8787bf8ecb74b2ULL, 0x81b3e73d20b49b6fULL,
    0x7fa8220ba3b2eceaULL, 0x245731c13ca42499ULL, 0xb78dbfaf3a8d83bdULL,
    0xea1ad565322a1a0bULL, 0x60e61c23a3795013ULL, 0x6606d7e446282b93ULL,
    0x6ca4ecb15c5f91e1ULL, 0x9f626da15c9625f3ULL, 0xe51b38608ef25f57ULL,
    0x958a324ceb064572ULL,
};

static const uint64_t vectors_1_3_zero[64] = {
    0xd1fba762150c532cULL, 0x68a914128e01e473ULL, 0x010bac45c41e3669ULL,
    0x4d4c9a4a8ef6e0adULL, 0x7cc43f98813e4dbdULL, 0x5abe2169dff36275ULL,
    0xe3c25f87624f1cdbULL, 0x2f098ab0c751325aULL, 0xead411e67ebe2eeaULL,
    0x75927f9d95124362ULL, 0xaf9f77a65ab51a1dULL, 0xfe64ce8b6617fcffULL,
    0xa6baf4fb0f9fe1c2ULL, 0xa0cf3211850f8e0dULL, 0x7f86049379fbfe67ULL,
    0xf30eb725bb91c9eaULL, 0x8972188433a5c5b7ULL, 0x4883c49a2c009c1dULL,
    0xadc2c0b63044067dULL, 0x091f4a3329f87d19ULL, 0x639e355ae68c0100ULL,
    0xb17bef2cb5213239ULL, 0xf8aeb1066236ccfeULL, 0x37332b1389daa4ffULL,
    0x31185a47af932f3aULL, 0xebf352e82ae23e2fULL, 0xed36ff242fe478b2ULL,
    0x2454d97d299299dfULL, 0x8cd57fe8130d0ac7ULL, 0xbe98eb2faf0a0e85ULL,
    0xd427c34ee09470c6ULL, 0x169739443111d49bULL, 0x31ef8061c910629bULL,
    0x7fb71d24dfa4c9f6ULL, 0x92771f49e836d389ULL, 0x3c393cf6f0853bc3ULL,
    0xac77921fcc642bd3ULL, 0x422a9751192ff266ULL, 0xc680ae8a8c584ddfULL,
    0x6c76b6d34bb6d26bULL, 0x95bc321ab41d8206ULL, 0x908a3a97a6d37669ULL,
    0xfcaf3c64874dd0b4ULL, 0xf689479b32b84a44ULL, 0xd857641079efd1fdULL,
    0x8b581578722633f7ULL, 0x83cb09d35ea7bcd4ULL, 0x8485f7f5ae725a0dULL,
    0xfe1f2445ba50237fULL, 0x23cece041d7866b0ULL, 0x416687480b336c09ULL,
    0xf15960da7e7f3892ULL, 0xded6177b9826835aULL, 0xf80dae51668be6beULL,
    0x17ecc6ee6647df18ULL, 0x5220d642b4a52110ULL, 0xa4f0cf4ba4adc016ULL,
    0xe5125bb26d1f2976ULL, 0x851b0e75f580d256ULL, 0x12605250a37e39acULL,
    0xd95a713568daebf1ULL, 0xcdcf4a42ec0dd605ULL, 0xa5c708712b617164ULL,
    0x385d3e39e5f37359ULL,
};

static const uint64_t vectors_1_3_one[64] = {
    0xc44a0ebf4e962581ULL, 0xc7f8837cdc05230bULL, 0xbfeff0bc8a414c08ULL,
    0xd8c82d87fa4286e4ULL, 0x5d51da6e88a607e0ULL, 0x904197b89cffef85ULL,
    0x5495a918e3423106ULL, 0x9ce896d47e204af6ULL, 0x51738227823e2309ULL,
    0xa9d59ba0fefc9497ULL, 0xc56750690b3345efULL, 0xdccd724817e07d34ULL,
    0x292cdaf7e383c05aULL, 0xf1274d8b4ae1246eULL, 0x768cb93004a0efa8ULL,
    0x535280d545ebc696ULL, 0xde2f7768ba893d84ULL, 0xa5f1ec80df8761a5ULL,
    0x1427ef7862a19171ULL, 0x655a0dc22d8b90a6ULL, 0xd0c112e9e4038c40ULL,
    0x24d633ab5ba1b7e9ULL, 0x99b06c142bcf8b5fULL, 0x18feebfcbb0326b3ULL,
    0xf5e408152c880545ULL, 0x6015f851bac89dc1ULL, 0xac33279dc38a017eULL,
    0x9bc7412bb2eb7394ULL, 0x5ffa8eddba0091e6ULL, 0xdffde98f2c745b79ULL,
    0x78db18c79a12f099ULL, 0x446a5b127a38bf2eULL, 0xded378bdce3e8ed5ULL,
    0xfcca56c93ac0918cULL, 0x5b39d7994e4f784cULL, 0x1a0a1f9156633641ULL,
    0x5d8abd3827b86fcbULL, 0xf13609be742294abULL, 0x577add0b75d2c331ULL,
    0xbfde1b9768516babULL, 0x5f4ed25d19cdcd56ULL, 0x0f1b601b270258d7ULL,
    0xb026423c6c066fbcULL, 0xc1876b1f6b36efb7ULL, 0x570442373a1298bdULL,
    0x1d320e1f7e5bbe92ULL, 0x527dc0ab084853dfULL, 0x6ef49aecf842b256ULL,
    0x196e65e9df13f340ULL, 0x3163970e2c2a3cecULL, 0xc5e84ae1e8e70d1cULL,
    0x12c3d0a742f81cb5ULL, 0xec779699cfb6dc88ULL, 0x1390ce0e757826d4ULL,
    0xcffe7f1d95d46cdbULL, 0x81739547885752ffULL, 0x399b320e8f24805fULL,
    0xc01aee30b0649549ULL, 0xfd6325afbed1d417ULL, 0xbdc54acabc306afdULL,
    0x019a4b0f98334c46ULL, 0xba1a669aaa372afdULL, 0x828e134835b63734ULL,
    0xa35bf11b84b78be0ULL,
};

static void message(uint8_t msg[64])
{
    for (int i = 0; i < 64; i++)
        msg[i] = (uint8_t)i;
}

START_TEST(test_siphash_2_4_reference_vectors)
{
    const struct siphash_key key = {0x0706050403020100ULL,
                                    0x0f0e0d0c0b0a0908ULL};
    uint8_t msg[64];
    message(msg);
    for (size_t len = 0; len < 64; len++)
        ck_assert_msg(siphash_rounds(&key, msg, len, 2, 4) == vectors_2_4[len],
                      "length %zu", len);
}
END_TEST

START_TEST(test_siphash_1_3_reference_vectors)
{
    const struct siphash_key zero = {0, 0}, one = {1, 0};
    uint8_t msg[64];
    message(msg);
    for (size_t len = 0; len < 64; len++) {
        ck_assert_msg(siphash13(&zero, msg, len) == vectors_1_3_zero[len],
                      "key 0, length %zu", len);
        ck_assert_msg(siphash13(&one, msg, len) == vectors_1_3_one[len],
                      "key 1, length %zu", len);
        ck_assert(siphash_rounds(&one, msg, len, 1, 3) == vectors_1_3_one[len]);
    }
}
END_TEST

/* The hash reads only the len bytes it is given: nothing before or after,
 * and any alignment. */
START_TEST(test_siphash_reads_only_its_bytes)
{
    const struct siphash_key zero = {0, 0};
    uint8_t buf[80];
    for (size_t off = 0; off < 8; off++) {
        memset(buf, 0xa5, sizeof(buf));
        message(buf + off);
        for (size_t len = 0; len < 64; len++)
            ck_assert(siphash13(&zero, buf + off, len) ==
                      vectors_1_3_zero[len]);
    }
}
END_TEST

START_TEST(test_process_key_is_stable_and_settable)
{
    const struct siphash_key *k = siphash_process_key();
    struct siphash_key first = *k;
    ck_assert(siphash_process_key() == k);
    ck_assert(k->k0 == first.k0 && k->k1 == first.k1);
    /* 128 random bits are not both zero but with odds of 2^-128. */
    ck_assert(first.k0 != 0 || first.k1 != 0);
    const struct siphash_key fixed = {42, 43};
    siphash_set_process_key(&fixed);
    ck_assert(siphash_process_key()->k0 == 42);
    ck_assert(siphash_process_key()->k1 == 43);
}
END_TEST

static Suite *siphash_suite(void)
{
    Suite *s = suite_create("siphash");
    TCase *tc = tcase_create("siphash");
    tcase_add_test(tc, test_siphash_2_4_reference_vectors);
    tcase_add_test(tc, test_siphash_1_3_reference_vectors);
    tcase_add_test(tc, test_siphash_reads_only_its_bytes);
    tcase_add_test(tc, test_process_key_is_stable_and_settable);
    suite_add_tcase(s, tc);
    return s;
}

OFFERD_CHECK_MAIN(siphash_suite)
