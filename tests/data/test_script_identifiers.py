"""Direct-identifier names in Japanese, Chinese, Korean, Arabic and Russian (module
crowdsafe.data.script_words). The Latin word tables cut a name into a-z words, so a name in
another script had no words and nothing was found: a Japanese table's 氏名 (full name) and
生年月日 (date of birth) were kept as quasi-identifiers without a warning (found by a sweep
with international files, 2026-11-30)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe.data.identifiers import REASONS, identifier_by_name

IDENTIFIERS = {
    "氏名": "name", "患者氏名": "name", "フリガナ": "name", "生年月日": "birth", "電話番号1": "phone",
    "ＦＡＸ番号": "phone", "メールアドレス": "email", "住所": "address", "マイナンバー": "national",
    "診察券番号": "id", "姓名": "name", "出生日期": "birth", "手机号码": "phone", "身份证号码": "national",
    "電子郵件": "email", "地址": "address", "이름": "name", "생년월일": "birth", "전화번호": "phone",
    "주민등록번호": "national", "이메일": "email", "주소": "address", "الاسم": "name", "الإسم": "name",
    "اسم المريض": "name", "تاريخ الميلاد": "birth", "رقم الهاتف": "phone", "البريد الإلكتروني": "email",
    "العنوان": "address", "رقم الهوية": "national", "Фамилия": "name", "Имя": "name", "ФИО": "name",
    "Дата рождения": "birth", "дата_рождения": "birth", "Телефон": "phone", "Электронная почта": "email",
    "Адрес": "address", "Номер паспорта": "national", "СНИЛС": "national",
}
ATTRIBUTES = ["年齢", "性別", "都道府県", "診断名", "品名", "地名", "年龄", "性别", "诊断", "나이", "성별", "진단",
              "العمر", "الجنس", "المدينة", "اسم المدينة", "التشخيص", "Возраст", "Пол", "Город", "Диагноз",
              "Имя файла", "Почтовый индекс"]


@pytest.mark.parametrize(("column", "kind"), IDENTIFIERS.items())
def test_identifier_names_in_other_scripts_are_recognised(column, kind):
    assert identifier_by_name(column) == REASONS[kind]


@pytest.mark.parametrize("column", ATTRIBUTES)
def test_attribute_names_in_other_scripts_are_not(column):
    """Ages, sexes, places, diagnoses, a product's name (品名) and a city's name (اسم المدينة)."""
    assert identifier_by_name(column) is None


def test_check_warns_about_a_japanese_name_column_and_the_draft_drops_it(tmp_path, capsys):
    rng = np.random.default_rng(3)
    data = tmp_path / "患者.csv"
    pl.DataFrame({"氏名": [f"山田{i}" for i in range(60)], "生年月日": [f"1980-01-{1 + i % 28:02d}" for i in range(60)],
                  "年齢": rng.integers(20, 80, 60), "性別": rng.choice(["男", "女"], 60)}).write_csv(data)
    code, _, err = run_command(capsys, "check", str(data))
    assert code == 0, err
    assert "column '氏名' looks like a person's name" in err and "column '生年月日' looks like a full date" in err
    assert "'年齢' looks" not in err and "'性別' looks" not in err
    code, _, err = run_command(capsys, "schema", "draft", str(data), "--out", str(tmp_path / "schema.toml"))
    assert code == 0, err
    draft = (tmp_path / "schema.toml").read_text(encoding="utf-8")
    for column in ("氏名", "生年月日"):
        block = draft.split(f'[attributes."{column}"]', 1)[1].split("[attributes.", 1)[0]
        assert 'role = "identifier"' in block, draft
