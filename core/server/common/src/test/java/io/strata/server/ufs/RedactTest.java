package io.strata.server.ufs;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** What operators and logs see of settings and mount options that may hold credentials. */
class RedactTest {
  @Test
  void credentialNamesAreMasked_othersShownAsTheyAre() {
    for (String name : new String[] {"fs.s3a.secret.key", "fs.s3a.access.key", "FS.AZURE.ACCOUNT.KEY.PASSWORD",
        "strata.security.token", "fs.gs.auth.credential.file", "fs.s3a.session.key",
        "fs.azure.account.key.acct.dfs.core.windows.net", "fs.gs.auth.service.account.private.key",
        "fs.s3a.encryption.key", "fs.s3a.server-side-encryption.key", "fs.oss.accessKeyId.key"}) {
      assertThat(Redact.isSecret(name)).as(name).isTrue();
      assertThat(Redact.masked(name, "hunter2")).isEqualTo(Redact.MASK);
      assertThat(Redact.setting(name, "hunter2")).isEqualTo(Redact.MASK);
    }
    assertThat(Redact.masked("fs.s3a.endpoint", "http://s3")).isEqualTo("http://s3");
    assertThat(Redact.setting("strata.master.rpc.port", "19998")).isEqualTo("19998");
    assertThat(Redact.isSecret("fs.s3a.encryption.algorithm")).isFalse();
    assertThat(Redact.isSecret("strata.master.keytab.file")).isFalse();
  }

  @Test
  void optionLists_maskEachCredentialValue_keepingTheirKeys() {
    assertThat(Redact.setting("strata.master.root.ufs.options",
        "fs.s3a.endpoint=http://s3,fs.s3a.secret.key=hunter2, fs.s3a.access.key = AKIA,novalue"))
        .isEqualTo("fs.s3a.endpoint=http://s3,fs.s3a.secret.key=******, fs.s3a.access.key =******,novalue");
    assertThat(Redact.options(Map.of("b", "2", "a", "1"))).isEqualTo("{a=***, b=***}");
  }
}
