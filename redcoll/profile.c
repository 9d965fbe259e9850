/* profile.c - the cost profile: text <-> redcoll_cost_model.

   Self-contained (redcoll.h's types and the C library, no file I/O), so it
   can move into the header next to redcoll_cost_model as it is. Included by
   main.c.

   The format, as `redcoll tune` writes it:

       # comments start with '#', anywhere on a line
       redcoll_profile 1          first line that is not blank or a comment
       alpha 2.1e-06              seconds per message (a two-way exchange)
       beta 1.3e-10               seconds per byte sent
       gamma 4.2e-11              seconds per byte reduced
       f_alpha 0.62               one-way message: f_alpha * alpha ...
       f_beta 0.97                ... + n * f_beta * beta (Rabenseifner 2004, 3.1)
       transport threads          anything else: "key value" lines a reader
       p 2                        ignores (what was measured, where, how)

   One "key value" per line, separated by spaces or tabs. The five numbers
   are required, each once, finite and > 0 (zero would mean "the default" in
   redcoll_options). Keys this reader does not know are ignored, so later
   versions can add information; a newer format version is refused. */

#define REDCOLL_PROFILE_VERSION 1

static const char *const redcoll__profile_keys[5] = { "alpha", "beta", "gamma", "f_alpha", "f_beta" };

static double *redcoll__profile_field(redcoll_cost_model *m, int k) {
    switch (k) {
    case 0: return &m->alpha;
    case 1: return &m->beta;
    case 2: return &m->gamma;
    case 3: return &m->f_alpha;
    default: return &m->f_beta;
    }
}

static redcoll_result redcoll__profile_error(char *err, size_t cap, int line, const char *what,
                                             const char *key) {
    if (err && cap) {
        if (line > 0) snprintf(err, cap, "line %d: %s%s%s", line, what, key ? " " : "", key ? key : "");
        else snprintf(err, cap, "%s%s%s", what, key ? " " : "", key ? key : "");
    }
    return REDCOLL_ERR_INVALID_ARG;
}

/* Parses profile text into *model.
   Parameters: text - the whole profile, NUL-terminated; model - receives the
     five parameters; err, cap - optional buffer for the reason of a refusal
     (names the line).
   Returns REDCOLL_OK, or REDCOLL_ERR_INVALID_ARG with *model untouched.
   Thread safety: none needed (no state); strtod follows the C locale. */
static redcoll_result redcoll_cost_model_parse(const char *text, redcoll_cost_model *model,
                                               char *err, size_t cap) {
    redcoll_cost_model m;
    int seen[5] = { 0, 0, 0, 0, 0 }, line = 0, version = 0, k;
    const char *s = text;
    if (!text || !model) return redcoll__profile_error(err, cap, 0, "no text", NULL);
    memset(&m, 0, sizeof m);
    while (*s) {
        char key[32], val[64];
        size_t kl = 0, vl = 0;
        int extra;
        const char *e = s;
        ++line;
        while (*e && *e != '\n' && *e != '#') ++e;       /* the line without its comment */
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
        while (s < e && *s != ' ' && *s != '\t' && *s != '\r' && kl + 1 < sizeof key) key[kl++] = *s++;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
        while (s < e && *s != ' ' && *s != '\t' && *s != '\r' && vl + 1 < sizeof val) val[vl++] = *s++;
        while (s < e && (*s == ' ' || *s == '\t' || *s == '\r')) ++s;
        key[kl] = 0;
        val[vl] = 0;
        extra = s < e;
        while (*e && *e != '\n') ++e;
        s = *e ? e + 1 : e;
        if (!kl) continue;                              /* blank or comment */
        if (!version) {
            char *end;
            long v;
            if (strcmp(key, "redcoll_profile") != 0)
                return redcoll__profile_error(err, cap, line, "expected \"redcoll_profile 1\", found", key);
            v = strtol(val, &end, 10);
            if (!vl || *end || v < 1 || extra) return redcoll__profile_error(err, cap, line, "bad version", val);
            if (v > REDCOLL_PROFILE_VERSION)
                return redcoll__profile_error(err, cap, line, "a newer profile version than this reader's:", val);
            version = (int)v;
            continue;
        }
        for (k = 0; k < 5 && strcmp(key, redcoll__profile_keys[k]) != 0; ++k) {}
        if (k == 5) continue;                          /* information for people */
        {
            char *end;
            double d;
            if (seen[k]) return redcoll__profile_error(err, cap, line, "repeated key", key);
            if (!vl || val[0] == '+' || val[0] == '-' || extra)
                return redcoll__profile_error(err, cap, line, "wants one number > 0:", key);
            d = strtod(val, &end);
            if (*end || !(d > 0) || d > 1e300)
                return redcoll__profile_error(err, cap, line, "wants a finite number > 0:", key);
            *redcoll__profile_field(&m, k) = d;
            seen[k] = 1;
        }
    }
    if (!version) return redcoll__profile_error(err, cap, 0, "not a profile (no \"redcoll_profile 1\" line)", NULL);
    for (k = 0; k < 5; ++k)
        if (!seen[k]) return redcoll__profile_error(err, cap, 0, "missing key", redcoll__profile_keys[k]);
    *model = m;
    return REDCOLL_OK;
}

/* Writes *model as profile text: the documented header, the version line
   and the five numbers with 17 significant digits (parsing them back gives
   the same doubles); a writer may append more "key value" lines.
   Returns the length of the whole text, as snprintf: call with cap 0 to size
   the buffer. */
static int redcoll_cost_model_format(const redcoll_cost_model *model, char *buf, size_t cap) {
    return snprintf(buf, cap,
                    "# redcoll cost profile (redcoll tune writes it; --profile FILE reads it)\n"
                    "# Rabenseifner 2004, 3.1: a message of n bytes exchanged both ways costs\n"
                    "# alpha + n beta seconds, one way f_alpha alpha + n f_beta beta; reducing\n"
                    "# n bytes costs n gamma. \"key value\" lines; unknown keys are ignored.\n"
                    "redcoll_profile %d\n"
                    "alpha %.17g\nbeta %.17g\ngamma %.17g\nf_alpha %.17g\nf_beta %.17g\n",
                    REDCOLL_PROFILE_VERSION, model->alpha, model->beta, model->gamma,
                    model->f_alpha, model->f_beta);
}
