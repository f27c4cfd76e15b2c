/* cfg_line — where a key sits in a config file, for messages about values
 * that parse but do not make sense together (a TP that does not divide
 * the heads), which are found after the file has been read. */
#include <libconfig.h>
#include <stdio.h>

#include "cfg/cfg.h"

int cfg_key_line(const char *path, const char *key)
{
    config_t c;
    config_init(&c);
    int line = 0;
    if (config_read_file(&c, path) == CONFIG_TRUE) {
        const config_setting_t *s = config_lookup(&c, key);
        if (s)
            line = (int)config_setting_source_line(s);
    }
    config_destroy(&c);
    return line;
}
