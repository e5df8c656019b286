"""Direct-identifier column names in scripts the Latin word tables cannot read.

:mod:`crowdsafe.data.column_words` cuts a name into Latin words, so a name in Japanese, Chinese,
Korean, Arabic or Cyrillic script has no words for it and nothing is found: a Japanese table's
``氏名`` (full name) and ``生年月日`` (date of birth) were kept as quasi-identifiers. Public, like
the Latin tables: every rule reads a column's *name*, never a value.

Japanese, Chinese and Korean write a name without spaces, so a term counts wherever it occurs in
the name (``患者氏名``, ``電話番号1``); the terms are the specific ones (``氏名``, not ``名``,
which is also in ``品名``, a product's name). Arabic and Russian names are compared word by
word, the term as a run of whole words (``رقم الهاتف``, ``дата рождения``); a few short words
(``имя``, ``الاسم``) count only as the whole name. Letters are compared after NFKC (full-width
and half-width forms as one) and in lower case; Arabic without its short-vowel marks and tatweel,
its alef forms and taa marbuta as one letter each; Russian ``ё`` as ``е``.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["SCRIPT_TERMS", "script_identifier"]

#: Per kind of identifier (the keys of :data:`crowdsafe.data.identifiers.REASONS`), the terms of
#: each language: ``ja`` Japanese, ``zh`` Chinese (simplified and traditional), ``ko`` Korean
#: (matched anywhere in the name), ``ar`` Arabic and ``ru`` Russian (matched as whole words).
SCRIPT_TERMS: dict[str, dict[str, tuple[str, ...]]] = {
    "name": {
        "ja": ("氏名", "名前", "姓名", "フリガナ", "ふりがな", "苗字", "名字"),
        "zh": ("姓名", "名字", "全名"),
        "ko": ("이름", "성명"),
        "ar": ("الاسم الكامل", "اسم المريض", "اسم العميل", "اسم الموظف", "اسم الطالب", "الاسم الاول",
               "اسم العائلة", "اللقب"),
        "ru": ("фамилия", "отчество", "фио", "полное имя", "имя пациента", "имя клиента")},
    "birth": {
        "ja": ("生年月日", "誕生日"), "zh": ("出生日期", "出生年月日", "生日"), "ko": ("생년월일", "생일"),
        "ar": ("تاريخ الميلاد",), "ru": ("дата рождения",)},
    "phone": {
        "ja": ("電話番号", "電話", "携帯番号", "携帯電話", "ファックス", "FAX番号"),
        "zh": ("电话号码", "電話號碼", "电话", "電話", "手机号", "手機號", "手机号码", "联系电话", "聯絡電話"),
        "ko": ("전화번호", "휴대폰", "핸드폰", "연락처"),
        "ar": ("رقم الهاتف", "الهاتف", "رقم الجوال", "الجوال", "رقم الموبايل", "هاتف"),
        "ru": ("телефон", "номер телефона", "мобильный телефон", "мобильный")},
    "email": {
        "ja": ("メールアドレス", "メール", "電子メール", "Eメール"),
        "zh": ("电子邮件", "電子郵件", "电子邮箱", "邮箱", "郵箱", "邮件地址"),
        "ko": ("이메일", "전자우편"),
        "ar": ("البريد الالكتروني", "البريد"),
        "ru": ("электронная почта", "эл почта", "почта")},
    "address": {
        "ja": ("住所", "番地"), "zh": ("地址", "住址", "家庭住址"), "ko": ("주소",),
        "ar": ("العنوان", "عنوان السكن"), "ru": ("адрес", "адрес проживания", "место жительства")},
    "national": {
        "ja": ("マイナンバー", "個人番号", "保険証番号", "被保険者番号", "旅券番号", "パスポート番号", "免許証番号"),
        "zh": ("身份证", "身分證", "身份证号", "身份证号码", "身分證字號", "护照号", "護照號碼", "社保号"),
        "ko": ("주민등록번호", "주민번호", "여권번호", "외국인등록번호"),
        "ar": ("رقم الهوية", "الرقم الوطني", "رقم الجواز", "رقم جواز السفر", "الرقم القومي", "رقم الاقامة"),
        "ru": ("паспорт", "номер паспорта", "снилс", "инн", "полис омс", "номер полиса")},
    "id": {
        "ja": ("患者番号", "会員番号", "顧客番号", "社員番号", "学籍番号", "カルテ番号", "診察券番号"),
        "zh": ("患者编号", "病历号", "病歷號", "会员编号", "客户编号", "员工编号", "学号", "學號"),
        "ko": ("환자번호", "회원번호", "고객번호", "사번", "학번"),
        "ar": ("رقم المريض", "رقم العميل", "رقم الملف", "رقم الموظف"),
        "ru": ("номер пациента", "номер клиента", "табельный номер", "номер карты")},
}

#: Short words that name a person only as the whole name (``имя``: first name; not ``имя файла``).
WHOLE_NAMES: dict[str, str] = {"имя": "name", "الاسم": "name", "اسم": "name"}

_UNSPACED = ("ja", "zh", "ko")
_ARABIC_MARKS = re.compile("[\u064b-\u065f\u0670\u0640]")  # short vowels, shadda, sukun, tatweel
_ARABIC_LETTERS = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا", "ة": "ه", "ى": "ي", "ё": "е"})
_NOT_LETTER = re.compile(r"[\W\d_]+")


def _normal(text: str) -> str:
    return _ARABIC_MARKS.sub("", unicodedata.normalize("NFKC", text).lower()).translate(_ARABIC_LETTERS)


def _spaced(text: str) -> str:
    """``text``'s words (letters of any script) joined by single spaces, padded: `` дата рождения ``."""
    return " " + " ".join(w for w in _NOT_LETTER.split(_normal(text)) if w) + " "


_ANYWHERE = [(_normal(term), kind) for kind, table in SCRIPT_TERMS.items() for lang in _UNSPACED
             for term in table.get(lang, ())]
_ANYWHERE.sort(key=lambda item: -len(item[0]))  # the longest term first: 電話番号 before 電話
_WORDS = [(_spaced(term), kind) for kind, table in SCRIPT_TERMS.items() for lang, terms in table.items()
          if lang not in _UNSPACED for term in terms]
_WHOLE = {_spaced(word): kind for word, kind in WHOLE_NAMES.items()}


def script_identifier(name: str) -> str | None:
    """The kind of direct identifier (``"name"``, ``"birth"``, ``"phone"``, ...) that ``name``
    reads as in Japanese, Chinese, Korean, Arabic or Russian, or None. Depends on the name alone."""
    if name.isascii():
        return None
    normal = _normal(name)
    for term, kind in _ANYWHERE:
        if term in normal:
            return kind
    spaced = _spaced(name)
    if spaced in _WHOLE:
        return _WHOLE[spaced]
    for term, kind in _WORDS:
        if term in spaced:
            return kind
    return None
